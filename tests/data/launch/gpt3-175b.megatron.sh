# Megatron-LM examples/gpt3/train_gpt3_175b_distributed.sh (NVIDIA/Megatron-LM), with its bash arrays
# expanded for 16 nodes of 8 GPUs, the tokenizer named, and data/checkpoint paths left as variables.
torchrun --nproc_per_node 8 --nnodes 16 --node_rank 0 --master_addr localhost --master_port 6000 \
  pretrain_gpt.py \
  --num-layers 96 \
  --hidden-size 12288 \
  --num-attention-heads 96 \
  --seq-length 2048 \
  --max-position-embeddings 2048 \
  --attention-backend auto \
  --micro-batch-size 1 \
  --global-batch-size 1536 \
  --rampup-batch-size 16 16 5859375 \
  --train-iters 500000 \
  --weight-decay 0.1 \
  --adam-beta1 0.9 \
  --adam-beta2 0.95 \
  --init-method-std 0.006 \
  --clip-grad 1.0 \
  --fp16 \
  --lr 6.0e-5 \
  --lr-decay-style cosine \
  --min-lr 6.0e-6 \
  --lr-warmup-fraction .001 \
  --lr-decay-iters 430000 \
  --tensor-model-parallel-size 8 \
  --pipeline-model-parallel-size 16 \
  --data-path $DATA_PATH \
  --tokenizer-type GPT2BPETokenizer \
  --vocab-file $VOCAB_FILE \
  --merge-file $MERGE_FILE \
  --split 949,50,1 \
  --log-interval 100 \
  --save-interval 10000 \
  --eval-interval 1000 \
  --save $CHECKPOINT_PATH \
  --load $CHECKPOINT_PATH \
  --eval-iters 10 \
  --tensorboard-dir $TENSORBOARD_LOGS_PATH
