# meshfit: llama3.1-70b, LoRA on 8 x H100 SXM 80GB (transformers TrainingArguments, peft LoraConfig).
import torch
from transformers import AutoModelForCausalLM, TrainingArguments
from peft import LoraConfig, get_peft_model

model = AutoModelForCausalLM.from_pretrained(
    pretrained_model_name_or_path="MODEL_ID_OR_PATH",
    torch_dtype=torch.bfloat16,
)
lora_config = LoraConfig(
    r=16,
    lora_alpha=32,
    lora_dropout=0.0,
    target_modules=["q_proj", "v_proj"],
    task_type="CAUSAL_LM",
)
model = get_peft_model(
    model=model,
    peft_config=lora_config,
    autocast_adapter_dtype=True,
)
training_args = TrainingArguments(
    output_dir="out",
    per_device_train_batch_size=1,
    gradient_accumulation_steps=1,
    bf16=True,
    gradient_checkpointing=True,
    optim="adamw_torch",
    gradient_checkpointing_kwargs={"use_reentrant": False},
    deepspeed={"train_batch_size": 8, "train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 1, "bf16": {"enabled": True}, "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu", "pin_memory": True}}, "data_types": {"grad_accum_dtype": "fp32"}, "optimizer": {"type": "AdamW", "params": {"lr": "auto", "betas": "auto", "eps": "auto", "weight_decay": "auto"}}},
)
# Sequences of 4096 tokens: pad or pack to this in your collator (TRL SFTConfig max_length).
